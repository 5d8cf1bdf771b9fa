"""The channels parents write on: a package each (`web/`, `chatwoot/`, `whatsapp/`, `terminal/`) with its registry
entry, what every channel shares (`base`, `inbound`, `outbound`, `worker`), and the registry (`registry`)."""
