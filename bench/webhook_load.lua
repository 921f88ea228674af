-- wrk script for bench/webhook_load.sh: POSTs one AdmissionReview (the file named by
-- $WEBHOOK_BODY, default bench/webhook-review.json) on every request of every kept-alive
-- connection, as the API server does, to the path of the URL given to wrk (/mutate).
--
--   WEBHOOK_BODY=bench/webhook-review.json wrk -t2 -c8 -d10s --latency \
--     -s bench/webhook_load.lua https://127.0.0.1:18443/mutate
--
-- At the end it prints one machine-readable line for the script to parse:
--   WRK_RESULT requests=N duration_us=N rps=N p50_us=N p99_us=N max_us=N non2xx=N errors=N

local path = os.getenv("WEBHOOK_BODY") or "bench/webhook-review.json"
local file = assert(io.open(path, "rb"))
local body = file:read("*a")
file:close()

wrk.method = "POST"
wrk.body = body
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, */*"
-- Go's http.Transport adds this to every request the API server's webhook client sends (it does
-- not set DisableCompression). gpuadmit answers uncompressed all the same; nginx (gzip off) too.
wrk.headers["Accept-Encoding"] = "gzip"
wrk.headers["User-Agent"] = "kube-apiserver-admission"

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "WRK_RESULT requests=%d duration_us=%d rps=%.1f p50_us=%d p99_us=%d max_us=%d non2xx=%d errors=%d\n",
    summary.requests, summary.duration, summary.requests / (summary.duration / 1e6),
    latency:percentile(50), latency:percentile(99), latency.max, e.status,
    e.connect + e.read + e.write + e.timeout))
end
