/** The SQS protocol adapter's public surface. */
export { type SqsRoutesOptions, sqsRoutes } from "./sqs-routes.js";
export { type SqsHandler, createSqsHandler } from "./sqs-handler.js";
export { type SqsFastPath, sqsFastPath } from "./sqs-fast-path.js";
export { sqsErrorForCode, protocolErrors, type SqsErrorSpec } from "./sqs-errors.js";
export { sqsErrorResponse } from "./sqs-handler.js";
