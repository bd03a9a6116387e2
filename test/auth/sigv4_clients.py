#!/usr/bin/python3
"""SigV4 with Debian's boto3 (query protocol): the right key works, a wrong secret and an unknown
key get SQS's own errors, and a presigned URL works until it is tampered with.

usage: sigv4_clients.py ENDPOINT_URL ACCESS_KEY_ID SECRET_ACCESS_KEY   (prints one line per check)
"""
import sys
import urllib.error
import urllib.request

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

endpoint, key_id, secret = sys.argv[1:4]
config = Config(retries={"max_attempts": 1})


def client(key, secret_key):
    return boto3.client("sqs", endpoint_url=endpoint, region_name="eu-west-1", aws_access_key_id=key,
                        aws_secret_access_key=secret_key, config=config)


def error_code(call):
    try:
        call()
    except ClientError as err:
        return err.response["Error"]["Code"], err.response["ResponseMetadata"]["HTTPStatusCode"]
    return None


good = client(key_id, secret)
url = good.create_queue(QueueName="boto3-signed")["QueueUrl"]
good.send_message(QueueUrl=url, MessageBody="signed by boto3")
got = good.receive_message(QueueUrl=url, WaitTimeSeconds=1)["Messages"][0]["Body"]
print("right key:", got)
print("wrong secret:", *error_code(lambda: client(key_id, secret + "x").send_message(QueueUrl=url, MessageBody="no")))
print("unknown key:", *error_code(lambda: client("AKIDUNKNOWN", secret).send_message(QueueUrl=url, MessageBody="no")))

presigned = good.generate_presigned_url("send_message", Params={"QueueUrl": url, "MessageBody": "presigned"}, ExpiresIn=60, HttpMethod="GET")
with urllib.request.urlopen(presigned) as res:
    print("presigned:", res.status)
tampered = presigned.replace("MessageBody=presigned", "MessageBody=tampered")
try:
    urllib.request.urlopen(tampered)
    print("tampered: 200")
except urllib.error.HTTPError as err:
    body = err.read().decode()
    print("tampered:", err.code, "SignatureDoesNotMatch" in body)
