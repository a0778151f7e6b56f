"""Log text -> normalised lines -> signature matches -> ranked causes.  Pure: no machine access.

``normalize`` cleans what real logs carry (ANSI colours, timestamps, ``[rank3]:`` prefixes, CRLF,
progress bars, invalid UTF-8, multi-megabyte lines); ``signatures`` loads the knowledge base's error
signatures; ``match`` streams lines through a cheap prefilter and the full signatures; ``extract`` finds
version facts inside tracebacks and warnings; ``rank`` joins matches, context and check findings into
ranked diagnoses.
"""
