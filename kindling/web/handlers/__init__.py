"""HTTP handlers, one module per tag of openapi.yaml: unpack, call a service, shape the answer."""
