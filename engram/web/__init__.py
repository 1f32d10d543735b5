"""The API's parts below its composition (``engram.api``): who is calling, how large a body may
be, and the routes that append producers' episodes."""
