"""Spend budgets per agent and calendar period: caps that warn, then pause the runtime."""
