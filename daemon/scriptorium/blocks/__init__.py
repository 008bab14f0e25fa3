"""How a document is cut into blocks: the extractor protocol and the chain that picks one
extractor per file.
"""
