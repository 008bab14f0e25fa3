"""GetContent: location resolution (resolve), the fetch service (fetch), and cutting the answer
(cut).
"""
