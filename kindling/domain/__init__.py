"""Plain rules and values shared by the services and the web edge: who may do what, date ranges,
money, storable text, export files and check-in codes."""
