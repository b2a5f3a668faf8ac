"""`meshcert serve`: continuous certification on Hub webhooks (docs/serve.md).

One job per module: `config` (serve.toml), `payload` (a delivery's JSON, leniently),
`queue` (SQLite: deliveries, tasks, certification jobs, leases), `hub_side` (the Hub calls the
service makes, through meshcert.core.hub.api), `certifier` (certify, sign, upload), `catalog_pr`
(a catalog pull request's diff -> the package pins to certify), `comments` (the one comment per
pull request), `markdown` (what a package or a payload wrote, as plain text for the Hub),
`worker` (runs the queued tasks), `app` (the ASGI app: /webhook, /healthz, /status),
`status_page` (its HTML), `release_matrix` (`catalog recheck --mesh-llm`, the release matrix,
one discussion per refused package), `schedule` (the service's own rechecks), `service` (the
pieces wired together).
"""
