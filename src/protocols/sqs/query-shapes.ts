/**
 * How each action's input is spelled in the query protocol, from the smithy model's xmlName and
 * xmlFlattened traits: every list and map in SQS inputs is flattened, so `Attribute.1.Name` is the
 * first entry of the member `Attributes`, `AttributeName.2` the second item of `AttributeNames`.
 * The query codec walks these shapes to rebuild the JSON-protocol form of the request.
 */

export type QueryShape =
  | { kind: "scalar" }
  | { kind: "list"; item: QueryShape; absentIsEmpty?: boolean }
  | { kind: "map"; keyName: string; valueName: string; value: QueryShape }
  | { kind: "struct"; members: Record<string, { xmlName: string; shape: QueryShape }>; byXmlName: ReadonlyMap<string, string>; emptyListNames: ReadonlySet<string>; emptyLists: readonly string[] };

const scalar: QueryShape = { kind: "scalar" };

/** A flattened list: the member is spelled `<xmlName>.N`. */
interface FlatMember {
  xmlName: string;
  shape: QueryShape;
}

function list(xmlName: string, item: QueryShape = scalar): FlatMember {
  return { xmlName, shape: { kind: "list", item } };
}

/**
 * A flattened list the query protocol can't send empty (botocore sends nothing for `[]`): where
 * SQS answers an empty list otherwise than a missing one, none is read as [].
 */
function absentIsEmpty(member: FlatMember): FlatMember {
  return member.shape.kind === "list" ? { ...member, shape: { ...member.shape, absentIsEmpty: true } } : member;
}

function map(xmlName: string, keyName: string, valueName: string, value: QueryShape = scalar): FlatMember {
  return { xmlName, shape: { kind: "map", keyName, valueName, value } };
}

/** Members given as a shape are spelled by their own name; scalars as `true`. */
function struct(members: Record<string, FlatMember | QueryShape | true>): QueryShape {
  const out: Record<string, { xmlName: string; shape: QueryShape }> = {};
  for (const [name, m] of Object.entries(members)) {
    if (m === true) out[name] = { xmlName: name, shape: scalar };
    else if ("xmlName" in m) out[name] = m;
    else out[name] = { xmlName: name, shape: m };
  }
  // The codec walks the parameters sent, not the members: each one must name a member.
  const byXmlName = new Map(Object.entries(out).map(([name, m]) => [m.xmlName, name]));
  // botocore sends an empty flattened list as `<member name>=` (`TagKeys=`), not by its xmlName.
  const emptyListNames = new Set(Object.keys(out).filter((name) => out[name]!.shape.kind === "list" && out[name]!.xmlName !== name));
  const emptyLists = Object.keys(out).filter((name) => {
    const shape = out[name]!.shape;
    return shape.kind === "list" && shape.absentIsEmpty === true;
  });
  return { kind: "struct", members: out, byXmlName, emptyListNames, emptyLists };
}

const attributeValue = struct({
  StringValue: true,
  BinaryValue: true,
  StringListValues: list("StringListValue"),
  BinaryListValues: list("BinaryListValue"),
  DataType: true,
});

const queueAttributes = map("Attribute", "Name", "Value");
const tags = map("Tag", "Key", "Value");
const messageAttributes = map("MessageAttribute", "Name", "Value", attributeValue);
const messageSystemAttributes = map("MessageSystemAttribute", "Name", "Value", attributeValue);

const sendEntry = struct({
  Id: true,
  MessageBody: true,
  DelaySeconds: true,
  MessageAttributes: messageAttributes,
  MessageSystemAttributes: messageSystemAttributes,
  MessageDeduplicationId: true,
  MessageGroupId: true,
});

export const queryInputShapes: Record<string, QueryShape> = {
  AddPermission: struct({ QueueUrl: true, Label: true, AWSAccountIds: list("AWSAccountId"), Actions: list("ActionName") }),
  CancelMessageMoveTask: struct({ TaskHandle: true }),
  ChangeMessageVisibility: struct({ QueueUrl: true, ReceiptHandle: true, VisibilityTimeout: true }),
  ChangeMessageVisibilityBatch: struct({
    QueueUrl: true,
    Entries: list("ChangeMessageVisibilityBatchRequestEntry", struct({ Id: true, ReceiptHandle: true, VisibilityTimeout: true })),
  }),
  CreateQueue: struct({ QueueName: true, Attributes: queueAttributes, tags }),
  DeleteMessage: struct({ QueueUrl: true, ReceiptHandle: true }),
  DeleteMessageBatch: struct({ QueueUrl: true, Entries: list("DeleteMessageBatchRequestEntry", struct({ Id: true, ReceiptHandle: true })) }),
  DeleteQueue: struct({ QueueUrl: true }),
  GetQueueAttributes: struct({ QueueUrl: true, AttributeNames: list("AttributeName") }),
  GetQueueUrl: struct({ QueueName: true, QueueOwnerAWSAccountId: true }),
  ListDeadLetterSourceQueues: struct({ QueueUrl: true, NextToken: true, MaxResults: true }),
  ListMessageMoveTasks: struct({ SourceArn: true, MaxResults: true }),
  ListQueueTags: struct({ QueueUrl: true }),
  ListQueues: struct({ QueueNamePrefix: true, NextToken: true, MaxResults: true }),
  PurgeQueue: struct({ QueueUrl: true }),
  ReceiveMessage: struct({
    QueueUrl: true,
    // Both lists share the xmlName AttributeName in the model: the query protocol can't tell them
    // apart, so the codec fills AttributeNames and the action reads the union.
    AttributeNames: list("AttributeName"),
    MessageAttributeNames: list("MessageAttributeName"),
    MaxNumberOfMessages: true,
    VisibilityTimeout: true,
    WaitTimeSeconds: true,
    ReceiveRequestAttemptId: true,
  }),
  RemovePermission: struct({ QueueUrl: true, Label: true }),
  SendMessage: struct({
    QueueUrl: true,
    MessageBody: true,
    DelaySeconds: true,
    MessageAttributes: messageAttributes,
    MessageSystemAttributes: messageSystemAttributes,
    MessageDeduplicationId: true,
    MessageGroupId: true,
  }),
  SendMessageBatch: struct({ QueueUrl: true, Entries: list("SendMessageBatchRequestEntry", sendEntry) }),
  SetQueueAttributes: struct({ QueueUrl: true, Attributes: queueAttributes }),
  StartMessageMoveTask: struct({ SourceArn: true, DestinationArn: true, MaxNumberOfMessagesPerSecond: true }),
  TagQueue: struct({ QueueUrl: true, Tags: tags }),
  UntagQueue: struct({ QueueUrl: true, TagKeys: absentIsEmpty(list("TagKey")) }),
};

/** Whether the action names a queue (its input has QueueUrl): only those are valid on a queue URL. */
export function actsOnQueue(action: string): boolean {
  const shape = queryInputShapes[action];
  return shape?.kind === "struct" && shape.members.QueueUrl !== undefined;
}
