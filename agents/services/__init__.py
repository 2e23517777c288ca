"""Every write on agents. Modules: selection (deploy rules), deploy, adopt, lifecycle,
provisioning (the job's logic), monitoring (the sweep), assignment, billing, workload."""
