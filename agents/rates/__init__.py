"""The rate book: what a model's tokens cost (the built-in catalog and the operators' overrides),
read by usage pricing and by what Fleet tells a runtime of its models."""
