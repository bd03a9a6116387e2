/**
 * Actions that are routed but not implemented yet: permissions (there is no IAM here) and
 * dead-letter source listing / message move tasks (a later change brings them).
 */
import { fail } from "../../../core/errors.js";
import { defineAction, type RegisteredAction } from "../action.js";

function unsupported(action: string): RegisteredAction {
  return defineAction({
    decode: () => undefined,
    run: async (): Promise<void> => fail("UnsupportedOperation", `${action} is not supported by Sluice yet.`),
  });
}

export const addPermission = unsupported("AddPermission");
export const removePermission = unsupported("RemovePermission");
export const listDeadLetterSourceQueues = unsupported("ListDeadLetterSourceQueues");
export const startMessageMoveTask = unsupported("StartMessageMoveTask");
export const cancelMessageMoveTask = unsupported("CancelMessageMoveTask");
export const listMessageMoveTasks = unsupported("ListMessageMoveTasks");
