#!/usr/bin/env bash
# Smoke test with Debian's awscli (`aws sqs …`, query protocol): FIFO, a dead-letter queue and a
# message move task back to the source. Run by test/smoke/smoke.test.ts against a live server.
# usage: awscli_smoke.sh ENDPOINT_URL      (AWS_CLI overrides the binary, default /usr/bin/aws)
set -euo pipefail

endpoint="$1"
here="$(cd "$(dirname "$0")" && pwd)"
export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_DEFAULT_REGION=us-east-1 AWS_PAGER=""
# Debian's awscli predates message move tasks: load the extended model (see sqs_model.py).
AWS_DATA_PATH="$(mktemp -d)"
export AWS_DATA_PATH
/usr/bin/python3 "$here/sqs_model.py" awscli "$AWS_DATA_PATH"

aws() { "${AWS_CLI:-/usr/bin/aws}" --endpoint-url "$endpoint" --output text "$@"; }
ok() { echo "ok - $1"; }
fail() { echo "FAIL - $1" >&2; exit 1; }
arn() { echo "arn:aws:sqs:us-east-1:000000000000:$1"; }
depth() { aws sqs get-queue-attributes --queue-url "$1" --attribute-names ApproximateNumberOfMessages --query Attributes.ApproximateNumberOfMessages; }

"${AWS_CLI:-/usr/bin/aws}" --version
stem="awscli-$$"

# FIFO: order within a group and deduplication.
fifo=$(aws sqs create-queue --queue-name "$stem.fifo" --attributes FifoQueue=true,ContentBasedDeduplication=true --query QueueUrl)
id1=$(aws sqs send-message --queue-url "$fifo" --message-body first --message-group-id g --query MessageId)
aws sqs send-message --queue-url "$fifo" --message-body second --message-group-id g --query SequenceNumber >/dev/null
dup=$(aws sqs send-message --queue-url "$fifo" --message-body first --message-group-id g --query MessageId)
[ "$dup" = "$id1" ] || fail "duplicate send should return the original MessageId ($dup != $id1)"
ok "FIFO deduplication"
bodies=$(aws sqs receive-message --queue-url "$fifo" --max-number-of-messages 10 --attribute-names All --query 'Messages[].Body' | tr '\t' ' ')
[ "$bodies" = "first second" ] || fail "FIFO order: got '$bodies'"
ok "FIFO order"

# Dead-letter queue after maxReceiveCount.
dlq=$(aws sqs create-queue --queue-name "$stem-dlq" --query QueueUrl)
redrive="{\"deadLetterTargetArn\":\"$(arn "$stem-dlq")\",\"maxReceiveCount\":\"1\"}"
attributes=$(/usr/bin/python3 -c 'import json,sys; print(json.dumps({"VisibilityTimeout": "0", "RedrivePolicy": sys.argv[1]}))' "$redrive")
src=$(aws sqs create-queue --queue-name "$stem-src" --attributes "$attributes" --query QueueUrl)
aws sqs send-message --queue-url "$src" --message-body poison >/dev/null
aws sqs receive-message --queue-url "$src" >/dev/null
aws sqs receive-message --queue-url "$src" >/dev/null
[ "$(depth "$dlq")" = "1" ] || fail "the message should be in the DLQ"
sources=$(aws sqs list-dead-letter-source-queues --queue-url "$dlq" --query 'queueUrls[0]')
[ "$sources" = "$src" ] || fail "list-dead-letter-source-queues: '$sources'"
ok "dead-letter queue"

# A message move task back to the source.
handle=$(aws sqs start-message-move-task --source-arn "$(arn "$stem-dlq")" --query TaskHandle)
[ -n "$handle" ] || fail "no TaskHandle"
status=RUNNING
for _ in $(seq 1 150); do
  status=$(aws sqs list-message-move-tasks --source-arn "$(arn "$stem-dlq")" --query 'Results[0].Status')
  [ "$status" = RUNNING ] || break
  sleep 0.1
done
[ "$status" = COMPLETED ] || fail "move task status: $status"
[ "$(depth "$src")" = "1" ] && [ "$(depth "$dlq")" = "0" ] || fail "the message should be back in the source queue"
ok "message move task"
echo "awscli smoke: all passed"
