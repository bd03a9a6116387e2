#!/usr/bin/python3
"""Smoke test with Debian's python3-boto3 (query protocol): FIFO, a dead-letter queue, a message
move task back to the source, permissions. Run by test/smoke/smoke.test.ts against a live server.

usage: boto3_smoke.py ENDPOINT_URL     (exits non-zero with the failing step on any error)
"""
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ACCOUNT = "000000000000"


def extend_model():
    """Debian's botocore predates message move tasks: load the extended model (see sqs_model.py)."""
    out = tempfile.mkdtemp(prefix="sluice-boto3-model-")
    subprocess.run([sys.executable, os.path.join(HERE, "sqs_model.py"), "boto3", out], check=True)
    os.environ["AWS_DATA_PATH"] = out


def check(condition, what):
    if not condition:
        raise AssertionError(what)
    print("ok -", what.split(":")[0])


def main():
    endpoint = sys.argv[1]
    extend_model()
    import boto3
    import botocore

    print("boto3", boto3.__version__, "botocore", botocore.__version__)
    sqs = boto3.client(
        "sqs",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
    )
    check(sqs.meta.service_model.protocol == "query", "boto3 speaks the query protocol")
    stem = "boto3-%d" % os.getpid()
    arn = lambda name: "arn:aws:sqs:us-east-1:%s:%s" % (ACCOUNT, name)

    # FIFO: order within a group, deduplication, sequence numbers.
    fifo = sqs.create_queue(QueueName=stem + ".fifo", Attributes={"FifoQueue": "true", "ContentBasedDeduplication": "true"})["QueueUrl"]
    first = sqs.send_message(QueueUrl=fifo, MessageBody="a1", MessageGroupId="a")
    dup = sqs.send_message(QueueUrl=fifo, MessageBody="a1", MessageGroupId="a")
    check(dup["MessageId"] == first["MessageId"], "duplicate send answered with the original MessageId")
    batch = sqs.send_message_batch(
        QueueUrl=fifo,
        Entries=[{"Id": "2", "MessageBody": "a2", "MessageGroupId": "a"}, {"Id": "3", "MessageBody": "a3", "MessageGroupId": "a"}],
    )
    check(len(batch["Successful"]) == 2 and all(e["SequenceNumber"] > first["SequenceNumber"] for e in batch["Successful"]), "sequence numbers increase")
    got = sqs.receive_message(QueueUrl=fifo, MaxNumberOfMessages=10, AttributeNames=["All"]).get("Messages", [])
    check([m["Body"] for m in got] == ["a1", "a2", "a3"], "FIFO order within a group: %r" % [m["Body"] for m in got])
    check(got[0]["Attributes"]["MessageGroupId"] == "a" and got[0]["Attributes"]["SequenceNumber"] == first["SequenceNumber"], "FIFO system attributes")
    try:
        sqs.send_message(QueueUrl=fifo, MessageBody="x")
        check(False, "a FIFO send without MessageGroupId fails")
    except botocore.exceptions.ClientError as e:
        check(e.response["Error"]["Code"] == "MissingParameter", "a FIFO send without MessageGroupId fails: %s" % e.response["Error"])

    # Dead-letter queue after maxReceiveCount.
    dlq_name, src_name = stem + "-dlq", stem + "-src"
    dlq = sqs.create_queue(QueueName=dlq_name)["QueueUrl"]
    src = sqs.create_queue(
        QueueName=src_name,
        Attributes={"VisibilityTimeout": "0", "RedrivePolicy": json.dumps({"deadLetterTargetArn": arn(dlq_name), "maxReceiveCount": "2"})},
    )["QueueUrl"]
    sqs.send_message_batch(QueueUrl=src, Entries=[{"Id": str(i), "MessageBody": "m%d" % i} for i in range(3)])
    for _ in range(4):
        sqs.receive_message(QueueUrl=src, MaxNumberOfMessages=10)
    depth = lambda url: int(sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])["Attributes"]["ApproximateNumberOfMessages"])
    check(depth(dlq) == 3 and depth(src) == 0, "messages moved to the DLQ after maxReceiveCount")
    sources = sqs.list_dead_letter_source_queues(QueueUrl=dlq)["queueUrls"]
    check(sources == [src], "ListDeadLetterSourceQueues: %r" % sources)
    peek = sqs.receive_message(QueueUrl=dlq, AttributeNames=["All"], VisibilityTimeout=0)["Messages"][0]
    check(peek["Attributes"].get("DeadLetterQueueSourceArn") == arn(src_name), "DeadLetterQueueSourceArn")

    # A move task back to the source queue.
    handle = sqs.start_message_move_task(SourceArn=arn(dlq_name))["TaskHandle"]
    check(bool(handle), "StartMessageMoveTask returns a TaskHandle")
    deadline = time.monotonic() + 15
    while True:
        task = sqs.list_message_move_tasks(SourceArn=arn(dlq_name))["Results"][0]
        if task["Status"] != "RUNNING" or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    check(task["Status"] == "COMPLETED" and task["ApproximateNumberOfMessagesMoved"] == 3, "move task completed: %r" % task)
    check(depth(src) == 3 and depth(dlq) == 0, "messages are back in the source queue")

    # Permissions maintain the Policy attribute.
    sqs.add_permission(QueueUrl=src, Label="partner", AWSAccountIds=["111122223333"], Actions=["SendMessage"])
    policy = json.loads(sqs.get_queue_attributes(QueueUrl=src, AttributeNames=["Policy"])["Attributes"]["Policy"])
    check(policy["Statement"][0]["Sid"] == "partner", "AddPermission writes the Policy")
    sqs.remove_permission(QueueUrl=src, Label="partner")
    check("Policy" not in sqs.get_queue_attributes(QueueUrl=src, AttributeNames=["Policy"]).get("Attributes", {}), "RemovePermission clears it")
    print("boto3 smoke: all passed")


if __name__ == "__main__":
    main()
