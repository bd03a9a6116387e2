#!/usr/bin/python3
"""Error wordings of the query protocol through Debian's python3-boto3, as SQS words them: a
missing queue, a FIFO send without MessageGroupId, tags without tags or keys, too many tags.
Run by test/smoke/smoke.test.ts against a live server.

usage: boto3_wording.py ENDPOINT_URL     (exits non-zero with the failing step on any error)
"""
import os
import sys

import boto3
import botocore

ACCOUNT = "000000000000"


def expect_error(call, code, message, what):
    try:
        call()
    except botocore.exceptions.ClientError as e:
        error = e.response["Error"]
        if error.get("Code") != code or error.get("Message") != message:
            raise AssertionError("%s: got %r, expected %s %r" % (what, error, code, message))
        print("ok -", what)
        return
    raise AssertionError("%s: succeeded, expected %s" % (what, code))


def main():
    endpoint = sys.argv[1]
    sqs = boto3.client("sqs", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="test", aws_secret_access_key="test")
    assert sqs.meta.service_model.protocol == "query", "Debian's boto3 speaks the query protocol"
    stem = "wording-%d" % os.getpid()

    missing = "%s/%s/%s-ghost" % (endpoint, ACCOUNT, stem)
    no_queue = ("AWS.SimpleQueueService.NonExistentQueue", "The specified queue does not exist for this wsdl version.")
    for what, call in [
        ("GetQueueUrl", lambda: sqs.get_queue_url(QueueName=stem + "-ghost")),
        ("DeleteQueue", lambda: sqs.delete_queue(QueueUrl=missing)),
        ("GetQueueAttributes", lambda: sqs.get_queue_attributes(QueueUrl=missing, AttributeNames=["All"])),
        ("SendMessageBatch", lambda: sqs.send_message_batch(QueueUrl=missing, Entries=[{"Id": "a", "MessageBody": "x"}])),
        ("ListQueueTags", lambda: sqs.list_queue_tags(QueueUrl=missing)),
        ("TagQueue", lambda: sqs.tag_queue(QueueUrl=missing, Tags={"a": "b"})),
        ("UntagQueue", lambda: sqs.untag_queue(QueueUrl=missing, TagKeys=["a"])),
        ("DeleteMessage", lambda: sqs.delete_message(QueueUrl=missing, ReceiptHandle="unknown")),
        ("ReceiveMessage", lambda: sqs.receive_message(QueueUrl=missing)),
    ]:
        expect_error(call, *no_queue, what="%s on a missing queue" % what)

    fifo = sqs.create_queue(QueueName=stem + ".fifo", Attributes={"FifoQueue": "true", "ContentBasedDeduplication": "true"})["QueueUrl"]
    no_group = "The request must contain the parameter MessageGroupId."
    expect_error(lambda: sqs.send_message(QueueUrl=fifo, MessageBody="x"), "MissingParameter", no_group, "FIFO SendMessage without MessageGroupId")
    # A batch entry without one fails the whole call, as SQS's recorded answer (InvalidParameterValue).
    expect_error(
        lambda: sqs.send_message_batch(QueueUrl=fifo, Entries=[{"Id": "a", "MessageBody": "x", "MessageGroupId": "g"}, {"Id": "b", "MessageBody": "y"}]),
        "InvalidParameterValue",
        no_group,
        "FIFO SendMessageBatch with an entry without MessageGroupId",
    )

    name = stem + "-tags"
    url = sqs.create_queue(QueueName=name, tags={"kept": "yes"})["QueueUrl"]
    expect_error(lambda: sqs.tag_queue(QueueUrl=url, Tags={}), "MissingParameter", "The request must contain the parameter Tags.", "TagQueue without tags")
    expect_error(lambda: sqs.untag_queue(QueueUrl=url, TagKeys=[]), "InvalidParameterValue", "Tag keys must be between 1 and 128 characters in length.", "UntagQueue without keys")
    many = dict(("k%d" % i, str(i)) for i in range(50))
    expect_error(lambda: sqs.tag_queue(QueueUrl=url, Tags=many), "InvalidParameterValue", "Too many tags added for queue %s." % name, "TagQueue past 50 tags")
    tags = sqs.list_queue_tags(QueueUrl=url).get("Tags")
    if tags != {"kept": "yes"}:
        raise AssertionError("a refused TagQueue changed the tags: %r" % tags)
    print("ok - a refused TagQueue changes nothing")
    print("boto3 wording: all passed")


if __name__ == "__main__":
    main()
