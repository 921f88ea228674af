#!/usr/bin/env bash
# HTTPS load test of the webhook against nginx (SPEC §9): wrk POSTs a 4 KB GPU-pod
# AdmissionReview (bench/webhook-review.json, a training pod as the API server sends it) over TLS
# keep-alive to gpuadmit's /mutate, then the same load to an nginx that answers the same POST with
# a static reply of the same bytes as gpuadmit's response. Everything shares the machine's cores
# with wrk, as the SPEC's "load generator included" says.
#
#   bench/webhook_load.sh [-c CONNECTIONS] [-d SECONDS] [-n RUNS] [-t WRK_THREADS]
#                         [--threads N] [--log-level L] [--body FILE] [--no-build]
#
#   -c N           kept-alive connections, like the API server's to one replica (default 8)
#   -d SECONDS     duration of each measured wrk run (default 10)
#   -n RUNS        measured runs per server, interleaved; the best (highest req/s) is reported,
#                  every run is listed (default 3)
#   -t N           wrk threads (default 2: one per core of the 2-core target machine)
#   --threads N    gpuadmit serve --threads (default 6, the serve default)
#   --log-level L  gpuadmit serve --log-level (default info: one decision line per review, as
#                  in production; the log goes to a file in the temporary directory)
#   --body FILE    the AdmissionReview POSTed (default bench/webhook-review.json;
#                  bench/webhook-review-managed-fields.json is the same pod with the
#                  managedFields the API server adds; a path relative to the repository)
#   --no-build     use the existing build/gpuadmit
#   Environment: WARMUP (seconds per server before the runs, 2), BUILD_DIR (build), JOBS (2),
#   KEEP=DIR (copy wrk's reports, the logs and nginx's configuration there).
#
# Installs wrk and nginx from Debian when missing (apt-get; Debian's nginx package also enables
# the system nginx service — this script never uses or touches it: its nginx runs from a
# temporary prefix with its own configuration, on a loopback port). Ports: GPUADMIT_PORT (18443),
# METRICS_PORT (18090), NGINX_PORT (18444), all on 127.0.0.1. Everything is started in a temporary
# directory and stopped and removed on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

connections=8 duration=10 runs=3 wrk_threads=2 server_threads=6 log_level=info build=1 body_file=
warmup=${WARMUP:-2}
gpuadmit_port=${GPUADMIT_PORT:-18443} metrics_port=${METRICS_PORT:-18090}
nginx_port=${NGINX_PORT:-18444}
build_dir=${BUILD_DIR:-build}

usage() { sed -n '8,24p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while (($#)); do
  case $1 in
    -c) connections=${2:?}; shift 2 ;;
    -d) duration=${2:?}; shift 2 ;;
    -n) runs=${2:?}; shift 2 ;;
    -t) wrk_threads=${2:?}; shift 2 ;;
    --threads) server_threads=${2:?}; shift 2 ;;
    --log-level) log_level=${2:?}; shift 2 ;;
    --body) body_file=${2:?}; shift 2 ;;
    --no-build) build=0; shift ;;
    -h | --help) usage ;;
    *) echo "webhook_load: unknown argument $1" >&2; usage ;;
  esac
done
for n in "$connections" "$duration" "$runs" "$wrk_threads" "$server_threads"; do
  [[ $n =~ ^[1-9][0-9]*$ ]] || { echo "webhook_load: \"$n\" is not a positive number" >&2; exit 2; }
done
((duration <= 300 && runs <= 20 && connections <= 1024)) ||
  { echo "webhook_load: at most -d 300, -n 20, -c 1024" >&2; exit 2; }
((wrk_threads <= connections)) || wrk_threads=$connections

die() { echo "webhook_load: $*" >&2; exit 1; }
log() { echo "webhook_load: $*" >&2; }

# --- dependencies and build -------------------------------------------------------------------
if ((build)); then bash scripts/setup.sh; fi
missing=()
for p in wrk nginx curl; do command -v "$p" >/dev/null || missing+=("$p"); done
if ((${#missing[@]})); then
  sudo_cmd=""
  [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
  log "installing ${missing[*]}"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
if ((build)); then
  cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$build_dir" -j"${JOBS:-2}" --target gpuadmit >/dev/null
fi
gpuadmit=$repo/$build_dir/gpuadmit
[ -x "$gpuadmit" ] || die "$gpuadmit not built"
body=$(realpath "${body_file:-bench/webhook-review.json}")
[ -f "$body" ] || die "--body $body_file: no such file"
script=$repo/bench/webhook_load.lua

for port in "$gpuadmit_port" "$metrics_port" "$nginx_port"; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    die "127.0.0.1:$port is in use (set GPUADMIT_PORT, METRICS_PORT, NGINX_PORT)"
  fi
done

# --- temporary directory, background processes, cleanup ---------------------------------------
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpuadmit-load.XXXXXX")
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

now_ns() { date +%s%N; }
status_kib() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"; }
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
# CPU seconds (user + system) used so far by a process and its children threads/processes.
cpu_ticks() {
  local total=0 pid t
  for pid in "$@"; do
    t=$(awk '{ print $14 + $15 }' "/proc/$pid/stat" 2>/dev/null || echo 0)
    total=$((total + t))
  done
  echo "$total"
}

"$gpuadmit" certs --service gpuadmit --namespace gpuadmit --out "$tmp/certs" \
  --san localhost --san 127.0.0.1 >/dev/null

# --- gpuadmit ---------------------------------------------------------------------------------
t0=$(now_ns)
"$gpuadmit" serve --tls-cert "$tmp/certs/tls.crt" --tls-key "$tmp/certs/tls.key" \
  --listen "127.0.0.1:$gpuadmit_port" --metrics-listen "127.0.0.1:$metrics_port" \
  --threads "$server_threads" --log-level "$log_level" --shutdown-delay 0 \
  >"$tmp/gpuadmit.log" 2>&1 &
gpid=$!
pids+=("$gpid")
until curl -fsS -o /dev/null --max-time 1 --cacert "$tmp/certs/ca.crt" \
  "https://127.0.0.1:$gpuadmit_port/readyz" 2>/dev/null; do
  kill -0 "$gpid" 2>/dev/null || { cat "$tmp/gpuadmit.log" >&2; die "gpuadmit exited"; }
  (($(now_ns) - t0 < 10000000000)) || die "gpuadmit not ready after 10 s"
  sleep 0.001
done
t1=$(now_ns)
ready_ms=$(awk -v d=$((t1 - t0)) 'BEGIN { printf "%.1f", d / 1e6 }')
startup_us=$(grep -o '"startup_us":[0-9]*' "$tmp/gpuadmit.log" | head -1 | cut -d: -f2 || true)
sleep 0.5
rss_idle=$(status_kib "$gpid" VmRSS)

# The reply nginx will send: gpuadmit's own answer to this review.
code=$(curl -sS -o "$tmp/response.json" -w '%{http_code}' --cacert "$tmp/certs/ca.crt" \
  -H 'Content-Type: application/json' --data-binary "@$body" \
  "https://127.0.0.1:$gpuadmit_port/mutate")
[ "$code" = 200 ] || die "gpuadmit answered HTTP $code: $(head -c 300 "$tmp/response.json")"
grep -q '"patch":' "$tmp/response.json" || die "gpuadmit's answer has no patch (not a GPU pod?)"
response_bytes=$(wc -c <"$tmp/response.json")

# --- nginx: own prefix and configuration, same certificate and TLS settings as gpuadmit --------
mkdir -p "$tmp/nginx"
grep -q '\$' "$tmp/response.json" && die "the response contains \$, which nginx's return would expand"
reply=$(sed -e 's/\\/\\\\/g' -e "s/'/\\\\'/g" "$tmp/response.json")
user_line=""
[ "$(id -u)" = 0 ] && user_line="user nobody nogroup;"
cat >"$tmp/nginx/nginx.conf" <<CONF
$user_line
worker_processes auto;
daemon off;
pid $tmp/nginx/nginx.pid;
error_log $tmp/nginx/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $tmp/nginx/client_body;
  proxy_temp_path $tmp/nginx/proxy;
  fastcgi_temp_path $tmp/nginx/fastcgi;
  uwsgi_temp_path $tmp/nginx/uwsgi;
  scgi_temp_path $tmp/nginx/scgi;
  keepalive_timeout 10s;
  keepalive_requests 1000000;
  client_max_body_size 3m;
  client_body_buffer_size 16k;
  server {
    # reuseport: one listening socket per worker, so the 8 connections are spread over both
    # workers. Without it one worker often accepted all of them and nginx used one core
    # (39,000-40,000 req/s instead of 48,000-56,000): an unfairly weak baseline.
    listen 127.0.0.1:$nginx_port ssl reuseport;
    ssl_certificate $tmp/certs/tls.crt;
    ssl_certificate_key $tmp/certs/tls.key;
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_ciphers ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305;
    ssl_conf_command Ciphersuites TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256;
    ssl_prefer_server_ciphers on;
    ssl_ecdh_curve X25519:prime256v1:secp384r1;
    # return reads and discards the request body (ngx_http_discard_request_body) before replying.
    location = /mutate {
      default_type application/json;
      return 200 '$reply';
    }
    location = /readyz { return 200 'ok\n'; }
  }
}
CONF
nginx_args=(-p "$tmp/nginx/" -c "$tmp/nginx/nginx.conf" -e "$tmp/nginx/error.log")
"$nginx_bin" -t -q "${nginx_args[@]}" || die "nginx rejected its configuration ($tmp/nginx/nginx.conf)"
"$nginx_bin" "${nginx_args[@]}" &
npid=$!
pids+=("$npid")
n0=$(now_ns)
until curl -fsS -o /dev/null --max-time 1 --cacert "$tmp/certs/ca.crt" \
  "https://127.0.0.1:$nginx_port/readyz" 2>/dev/null; do
  kill -0 "$npid" 2>/dev/null || { cat "$tmp/nginx/error.log" >&2; die "nginx exited"; }
  (($(now_ns) - n0 < 10000000000)) || die "nginx not ready after 10 s"
  sleep 0.01
done
code=$(curl -sS -o "$tmp/nginx-response.json" -w '%{http_code}' --cacert "$tmp/certs/ca.crt" \
  -H 'Content-Type: application/json' --data-binary "@$body" \
  "https://127.0.0.1:$nginx_port/mutate")
[ "$code" = 200 ] || die "nginx answered HTTP $code"
cmp -s "$tmp/response.json" "$tmp/nginx-response.json" ||
  die "nginx's reply differs from gpuadmit's ($tmp/nginx-response.json)"
nginx_cpu_ticks() {
  local workers
  mapfile -t workers < <(pgrep -P "$npid" || true)
  cpu_ticks "$npid" "${workers[@]}"
}

# --- load ---------------------------------------------------------------------------------------
# run_wrk NAME URL SECONDS → prints the WRK_RESULT line; wrk's own report goes to $tmp/NAME.txt.
run_wrk() {
  WEBHOOK_BODY=$body timeout $(($3 + 30)) wrk -t"$wrk_threads" -c"$connections" -d"$3"s \
    --timeout 2s --latency -s "$script" "$2" >"$tmp/$1.txt" 2>&1 ||
    { cat "$tmp/$1.txt" >&2; die "wrk failed against $2"; }
  grep '^WRK_RESULT' "$tmp/$1.txt" || die "no result from wrk ($tmp/$1.txt)"
}
gpuadmit_url=https://127.0.0.1:$gpuadmit_port/mutate
nginx_url=https://127.0.0.1:$nginx_port/mutate
clk_tck=$(getconf CLK_TCK)
loadavg=$(cut -d' ' -f1-3 /proc/loadavg)
log "load: wrk -t$wrk_threads -c$connections -d${duration}s, $runs runs per server, interleaved" \
  "(+${warmup}s warm-up each); load average before: $loadavg"
if ((warmup > 0)); then
  run_wrk warmup-gpuadmit "$gpuadmit_url" "$warmup" >/dev/null
  run_wrk warmup-nginx "$nginx_url" "$warmup" >/dev/null
fi
results=()
for ((run = 1; run <= runs; run++)); do
  c0=$(cpu_ticks "$gpid")
  g=$(run_wrk "gpuadmit-$run" "$gpuadmit_url" "$duration")
  c1=$(cpu_ticks "$gpid")
  rss_now=$(status_kib "$gpid" VmRSS)
  c2=$(nginx_cpu_ticks)
  n=$(run_wrk "nginx-$run" "$nginx_url" "$duration")
  c3=$(nginx_cpu_ticks)
  results+=("gpuadmit run=$run cpu_ticks=$((c1 - c0)) rss_kib=$rss_now ${g#WRK_RESULT }")
  results+=("nginx run=$run cpu_ticks=$((c3 - c2)) ${n#WRK_RESULT }")
  log "run $run/$runs: gpuadmit $(grep -o 'rps=[0-9.]*' <<<"$g"), nginx $(grep -o 'rps=[0-9.]*' <<<"$n")"
done
rss_peak=$(status_kib "$gpid" VmHWM)
rss_after=$(status_kib "$gpid" VmRSS)
threads_now=$(status_kib "$gpid" Threads)

# --- report -------------------------------------------------------------------------------------
printf '%s\n' "${results[@]}" >"$tmp/results.txt"
report=$(awk -v duration="$duration" -v clk="$clk_tck" -v ready_ms="$ready_ms" \
  -v startup_us="${startup_us:-}" -v rss_idle="$rss_idle" -v rss_peak="$rss_peak" \
  -v rss_after="$rss_after" '
  function field(name,   i, kv) {
    for (i = 3; i <= NF; i++) { split($i, kv, "="); if (kv[1] == name) return kv[2] }
    return ""
  }
  {
    s = $1; rps = field("rps") + 0
    all[s] = all[s] sprintf(" %.0f", rps)
    bad[s] += field("non2xx") + field("errors")
    if (rps > best[s]) {
      best[s] = rps; p50[s] = field("p50_us") / 1000; p99[s] = field("p99_us") / 1000
      cpu[s] = field("cpu_ticks") / clk / duration
      us[s] = rps > 0 ? cpu[s] * 1e6 / rps : 0
    }
  }
  END {
    printf "%-10s %10s %9s %9s %11s %13s   %s\n", "server", "req/s", "p50 ms", "p99 ms", "server CPU", "CPU us/req", "req/s of every run"
    for (i = 1; i <= 2; i++) {
      s = i == 1 ? "gpuadmit" : "nginx"
      printf "%-10s %10.0f %9.3f %9.3f %9.2f c %13.0f  %s\n", s, best[s], p50[s], p99[s], cpu[s], us[s], all[s]
    }
    ratio = best["nginx"] > 0 ? best["gpuadmit"] / best["nginx"] : 0
    printf "gpuadmit / nginx: %.1f%%\n", ratio * 100
    printf "gpuadmit RSS: idle %.1f MiB, peak %.1f MiB (VmHWM), after the load %.1f MiB\n",
      rss_idle / 1024, rss_peak / 1024, rss_after / 1024
    printf "gpuadmit ready: /readyz answered 200 after %s ms (from exec, polled with curl);", ready_ms
    if (startup_us != "") printf " the process logged startup_us=%s", startup_us
    printf "\n"
    if (bad["gpuadmit"] + bad["nginx"] > 0)
      printf "WARNING: non-2xx responses or socket errors: gpuadmit %d, nginx %d\n", bad["gpuadmit"], bad["nginx"]
    print ""
    print "SPEC §9 targets:"
    ok = best["gpuadmit"] >= 10000; printf "  >= 10,000 reviews/s      %s (%.0f)\n", ok ? "met" : "NOT MET", best["gpuadmit"]
    ok = p99["gpuadmit"] <= 2; printf "  p99 <= 2 ms              %s (%.3f ms)\n", ok ? "met" : "NOT MET", p99["gpuadmit"]
    ok = ratio >= 0.35; printf "  >= 35%% of nginx         %s (%.1f%%)\n", ok ? "met" : "NOT MET", ratio * 100
    ok = rss_idle <= 32 * 1024; printf "  RSS idle <= 32 MiB       %s (%.1f MiB)\n", ok ? "met" : "NOT MET", rss_idle / 1024
    ok = rss_peak <= 64 * 1024; printf "  RSS under load <= 64 MiB %s (%.1f MiB)\n", ok ? "met" : "NOT MET", rss_peak / 1024
    ok = ready_ms + 0 <= 100; printf "  ready <= 100 ms          %s (%s ms)\n", ok ? "met" : "NOT MET", ready_ms
  }' "$tmp/results.txt")

cat <<TXT

machine: $(nproc) CPUs, $(lscpu | sed -n 's/^Model name:[[:space:]]*//p'); load average before: $loadavg
request: POST /mutate, $(wc -c <"$body") bytes ($(basename "$body")), TLS keep-alive, $connections connections
reply:   $response_bytes bytes (gpuadmit, HTTP 200 with a patch); nginx returns the same bytes
wrk:     -t$wrk_threads -c$connections -d${duration}s --latency, $runs runs each, interleaved, best run shown
gpuadmit serve --threads $server_threads --log-level $log_level ($threads_now threads)
nginx:   $("$nginx_bin" -v 2>&1 | sed 's/^nginx version: //'), worker_processes auto, listen reuseport, access_log off

$report
TXT
if [ -n "${KEEP:-}" ]; then
  mkdir -p "$KEEP"
  cp -r "$tmp"/*.txt "$tmp"/*.log "$tmp"/*.json "$tmp/nginx" "$KEEP"/ 2>/dev/null || true
  log "raw wrk output and logs copied to $KEEP"
fi
