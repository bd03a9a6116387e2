#!/usr/bin/python3
"""Writes an SQS service model that adds the message move task operations to the one installed.

Debian 12's python3-boto3 (botocore 1.29) and awscli (2.9) predate StartMessageMoveTask,
CancelMessageMoveTask and ListMessageMoveTasks (SQS added them in June 2023). botocore loads
extra models from AWS_DATA_PATH, so the smoke tests extend the installed model with these three
operations, exactly as the current SQS model defines them for the query protocol, and then call
them through the stock client (its own request signing, serialization and XML parsing).

usage: sqs_model.py boto3|awscli OUT_DIR   (then set AWS_DATA_PATH=OUT_DIR)
"""
import json
import os
import sys

STRING = {"shape": "String"}

OPERATIONS = {
    "StartMessageMoveTask": ("StartMessageMoveTaskRequest", "StartMessageMoveTaskResult"),
    "CancelMessageMoveTask": ("CancelMessageMoveTaskRequest", "CancelMessageMoveTaskResult"),
    "ListMessageMoveTasks": ("ListMessageMoveTasksRequest", "ListMessageMoveTasksResult"),
}

SHAPES = {
    "Long": {"type": "long"},
    "Integer": {"type": "integer"},
    "StartMessageMoveTaskRequest": {
        "type": "structure",
        "required": ["SourceArn"],
        "members": {"SourceArn": STRING, "DestinationArn": STRING, "MaxNumberOfMessagesPerSecond": {"shape": "Integer"}},
    },
    "StartMessageMoveTaskResult": {"type": "structure", "members": {"TaskHandle": STRING}},
    "CancelMessageMoveTaskRequest": {"type": "structure", "required": ["TaskHandle"], "members": {"TaskHandle": STRING}},
    "CancelMessageMoveTaskResult": {"type": "structure", "members": {"ApproximateNumberOfMessagesMoved": {"shape": "Long"}}},
    "ListMessageMoveTasksRequest": {
        "type": "structure",
        "required": ["SourceArn"],
        "members": {"SourceArn": STRING, "MaxResults": {"shape": "Integer"}},
    },
    "ListMessageMoveTasksResult": {"type": "structure", "members": {"Results": {"shape": "ListMessageMoveTasksResultEntryList"}}},
    "ListMessageMoveTasksResultEntryList": {
        "type": "list",
        "member": {"shape": "ListMessageMoveTasksResultEntry", "locationName": "ListMessageMoveTasksResultEntry"},
        "flattened": True,
    },
    "ListMessageMoveTasksResultEntry": {
        "type": "structure",
        "members": {
            "TaskHandle": STRING,
            "Status": STRING,
            "SourceArn": STRING,
            "DestinationArn": STRING,
            "MaxNumberOfMessagesPerSecond": {"shape": "Integer"},
            "ApproximateNumberOfMessagesMoved": {"shape": "Long"},
            "ApproximateNumberOfMessagesToMove": {"shape": "Long"},
            "FailureReason": STRING,
            "StartedTimestamp": {"shape": "Long"},
        },
    },
}


def installed_model_path(flavour):
    if flavour == "boto3":
        import botocore

        base = os.path.dirname(botocore.__file__)
    else:
        import awscli

        base = os.path.join(os.path.dirname(awscli.__file__), "botocore")
    return os.path.join(base, "data", "sqs", "2012-11-05", "service-2.json")


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("boto3", "awscli"):
        sys.exit(__doc__)
    flavour, out_dir = sys.argv[1], sys.argv[2]
    with open(installed_model_path(flavour)) as f:
        model = json.load(f)
    for name, (request, result) in OPERATIONS.items():
        model["operations"].setdefault(
            name,
            {
                "name": name,
                "http": {"method": "POST", "requestUri": "/"},
                "input": {"shape": request},
                "output": {"shape": result, "resultWrapper": result},
                "errors": [],
            },
        )
    for name, shape in SHAPES.items():
        model["shapes"].setdefault(name, shape)
    target = os.path.join(out_dir, "sqs", "2012-11-05")
    os.makedirs(target, exist_ok=True)
    with open(os.path.join(target, "service-2.json"), "w") as f:
        json.dump(model, f)


if __name__ == "__main__":
    main()
