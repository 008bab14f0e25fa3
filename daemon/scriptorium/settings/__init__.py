"""Settings: the declarative key tables (schema) and the configuration they parse (config)."""
