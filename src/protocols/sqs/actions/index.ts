/** Every SQS action by name (all 23 of API version 2012-11-05). */
import type { RegisteredAction } from "../action.js";
import { getQueueAttributes, setQueueAttributes } from "./attributes.js";
import { deleteMessage, deleteMessageBatch } from "./delete.js";
import { createQueue, deleteQueue, getQueueUrl, listQueues, purgeQueue } from "./queues.js";
import { receiveMessage } from "./receive.js";
import { sendMessage, sendMessageBatch } from "./send.js";
import { listQueueTags, tagQueue, untagQueue } from "./tags.js";
import { addPermission, removePermission } from "./permissions.js";
import { cancelMessageMoveTask, listDeadLetterSourceQueues, listMessageMoveTasks, startMessageMoveTask } from "./redrive.js";
import { changeMessageVisibility, changeMessageVisibilityBatch } from "./visibility.js";

export const sqsActions: ReadonlyMap<string, RegisteredAction> = new Map([
  ["AddPermission", addPermission],
  ["CancelMessageMoveTask", cancelMessageMoveTask],
  ["ChangeMessageVisibility", changeMessageVisibility],
  ["ChangeMessageVisibilityBatch", changeMessageVisibilityBatch],
  ["CreateQueue", createQueue],
  ["DeleteMessage", deleteMessage],
  ["DeleteMessageBatch", deleteMessageBatch],
  ["DeleteQueue", deleteQueue],
  ["GetQueueAttributes", getQueueAttributes],
  ["GetQueueUrl", getQueueUrl],
  ["ListDeadLetterSourceQueues", listDeadLetterSourceQueues],
  ["ListMessageMoveTasks", listMessageMoveTasks],
  ["ListQueueTags", listQueueTags],
  ["ListQueues", listQueues],
  ["PurgeQueue", purgeQueue],
  ["ReceiveMessage", receiveMessage],
  ["RemovePermission", removePermission],
  ["SendMessage", sendMessage],
  ["SendMessageBatch", sendMessageBatch],
  ["SetQueueAttributes", setQueueAttributes],
  ["StartMessageMoveTask", startMessageMoveTask],
  ["TagQueue", tagQueue],
  ["UntagQueue", untagQueue],
]);
