"""The companies service: a workspace's customer companies and who belongs to them (docs/services/companies.md)."""
