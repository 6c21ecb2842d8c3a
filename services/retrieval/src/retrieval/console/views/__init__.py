"""One class per page of the console, each over the services it reads."""
