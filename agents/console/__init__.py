"""The agent pages of the operators' console (agents/admin.py wires them): the forms and views
behind deploy, the lifecycle buttons, change resources, live logs and deploy progress. Every
one calls the services the API calls; nothing here decides a rule of its own."""
