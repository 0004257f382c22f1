#!/usr/bin/env bash
# make bench, storage part: a 2-hour room on the virtual clock uploaded to a real S3-compatible
# store (SeaweedFS from .venv/bin/weed, enforcing SigV4, on loopback ports the kernel picked), in
# multipart parts. SPEAKERS speakers (the sample alice.opus placed across HOURS hours) with --mix:
# each WAV is HOURS x 691 MB (2 h: 691 MB, past 500 MB). Two measurements, each the peak RSS
# (getrusage's ru_maxrss through /usr/bin/time) next to the sizes of the files it uploaded:
#   1. roomtap record ... --upload s3://bench/live --segment-seconds SEGMENT (segments while the
#      virtual clock runs, then the whole files in parts, verified);
#   2. roomtap upload DIR s3://bench/again (the finished room again, to a fresh prefix).
# Checks: both exit 0, and every object's size and SHA-256 (x-amz-meta-roomtap-sha256, HEAD) are
# the local file's. Needs about (SPEAKERS + 1) x 0.7 GB x HOURS / 2 of disk in BENCH_DIR, twice
# that in the store's directory; everything is deleted at the end.
set -euo pipefail
ROOMTAP=${ROOMTAP:-.build/release/roomtap}
WEED=${WEED:-.venv/bin/weed}
SPEAKERS=${SPEAKERS:-2}
HOURS=${HOURS:-2}
SEGMENT=${SEGMENT:-10}
DIR=${BENCH_DIR:-.build/bench-upload}
seconds=${ROOM_SECONDS:-$((HOURS * 3600))}
rm -rf "$DIR" && mkdir -p "$DIR/store"
DIR=$(cd "$DIR" && pwd)
weed_pid=""
cleanup() {
  [[ -n $weed_pid ]] && kill "$weed_pid" 2>/dev/null && wait "$weed_pid" 2>/dev/null
  rm -rf "$DIR"
}
trap cleanup EXIT

# Ports the kernel hands out (bound then released; the store binds them right after).
read -r -a ports < <(python3 -c "
import socket
ss=[socket.socket() for _ in range(8)]
for s in ss: s.bind(('127.0.0.1',0))
print(' '.join(str(s.getsockname()[1]) for s in ss))")
key="BENCH$RANDOM$RANDOM"
secret=$(python3 -c "import secrets;print(secrets.token_hex(20))")
cat >"$DIR/identities.json" <<EOF
{"identities":[{"name":"bench","credentials":[{"accessKey":"$key","secretKey":"$secret"}],"actions":["Admin","Read","Write","List","Tagging"]}]}
EOF
"$WEED" server -dir="$DIR/store" -ip=127.0.0.1 -ip.bind=127.0.0.1 -master.port="${ports[0]}" \
  -master.port.grpc="${ports[1]}" -master.telemetry=false -master.volumeSizeLimitMB=1024 \
  -volume.port="${ports[2]}" -volume.port.grpc="${ports[3]}" -volume.max=0 -filer -filer.port="${ports[4]}" \
  -filer.port.grpc="${ports[5]}" -s3 -s3.port="${ports[6]}" -s3.port.grpc="${ports[7]}" \
  -s3.config="$DIR/identities.json" -s3.port.iceberg=0 -s3.port.lance=0 -s3.autoCreateBucket=false \
  >"$DIR/weed.log" 2>&1 &
weed_pid=$!
export AWS_ACCESS_KEY_ID=$key AWS_SECRET_ACCESS_KEY=$secret AWS_REGION=us-east-1
export AWS_ENDPOINT_URL="http://127.0.0.1:${ports[6]}"
empty=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
s3() { curl -sS --aws-sigv4 "aws:amz:us-east-1:s3" --user "$key:$secret" -H "x-amz-content-sha256: $empty" "$@"; }
for ((i = 0; i < 600; i++)); do  # the store takes a bucket within 60 s
  code=$(s3 -o /dev/null -w '%{http_code}' -X PUT "$AWS_ENDPOINT_URL/bench" 2>/dev/null || true)
  [[ $code == 200 || $code == 409 ]] && break
  kill -0 "$weed_pid" 2>/dev/null || { echo "FAIL: weed exited: $(tail -3 "$DIR/weed.log")"; exit 1; }
  sleep 0.1
done
[[ $code == 200 || $code == 409 ]] || { echo "FAIL: SeaweedFS did not take a bucket: $(tail -3 "$DIR/weed.log")"; exit 1; }

args=()
for ((k = 0; k < SPEAKERS; k++)); do
  offset=$(( SPEAKERS > 1 ? (seconds - 20) * k / (SPEAKERS - 1) : seconds - 20 ))
  args+=(--file "s$k=Samples/room/alice.opus@$offset")
done
out="$DIR/room"
echo "upload bench: $SPEAKERS speakers + mix, $seconds s of room on the virtual clock, segments of $SEGMENT s"
/usr/bin/time -f "%M %e %U %S" -o "$DIR/record.time" \
  "$ROOMTAP" record "${args[@]}" --mix --out "$out" --quiet --upload s3://bench/live --segment-seconds "$SEGMENT"
/usr/bin/time -f "%M %e %U %S" -o "$DIR/upload.time" "$ROOMTAP" upload "$out" s3://bench/again --quiet >/dev/null

status=0
total=0
largest=0
for f in "$out"/*.wav "$out/room.json"; do
  name=$(basename "$f")
  size=$(stat -c %s "$f")
  sha=$(sha256sum "$f" | cut -d' ' -f1)
  total=$((total + size))
  ((size > largest)) && largest=$size
  prefixes="live again"
  # room.json's upload names its latest destination: after the second run it is again's.
  [[ $name == room.json ]] && prefixes=again
  for prefix in $prefixes; do
    head=$(s3 -I "$AWS_ENDPOINT_URL/bench/$prefix/$name" | tr -d '\r')
    remote_size=$(awk 'tolower($1)=="content-length:" {print $2}' <<<"$head")
    remote_sha=$(awk 'tolower($1)=="x-amz-meta-roomtap-sha256:" {print $2}' <<<"$head")
    etag=$(awk 'tolower($1)=="etag:" {print $2}' <<<"$head")
    ok=pass
    [[ $remote_size == "$size" && $remote_sha == "$sha" ]] || { ok=FAIL; status=1; }
    echo "$prefix/$name: $ok: $size bytes, ETag $etag"
  done
done
read -r rss_record wall_record user_record sys_record <"$DIR/record.time"
read -r rss_upload wall_upload user_upload sys_upload <"$DIR/upload.time"
mb() { python3 -c "print(f'{$1/1e6:.0f}')"; }
echo "files: $(mb $total) MB in all, the largest $(mb $largest) MB"
echo "record --upload: peak RSS $((rss_record / 1024)) MB, $wall_record s wall ($user_record s user, $sys_record s system)"
echo "upload:          peak RSS $((rss_upload / 1024)) MB, $wall_upload s wall ($user_upload s user, $sys_upload s system)"
exit $status
