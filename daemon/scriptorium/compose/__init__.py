"""The composing calls: related material, flows and implementation guides."""
