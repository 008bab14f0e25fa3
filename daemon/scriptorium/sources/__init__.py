"""Where content comes from: the source base classes and local trees (base), remote sources
(remote), file-system watching (watcher).
"""
