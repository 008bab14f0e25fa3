"""The semantic retriever: an in-process encoder, block vectors beside each generation, and the
nearest blocks to a query, fused with the lexical candidates (docs/ranking.md)."""
