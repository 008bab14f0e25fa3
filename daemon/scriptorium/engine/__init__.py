"""The engine: the contract the transport calls (base) and the local engine that composes the
services (local).
"""
