/** The SQS protocol adapter's public surface. */
export { type SqsRoutesOptions, sqsRoutes } from "./sqs-routes.js";
export { sqsErrorForCode, protocolErrors, type SqsErrorSpec } from "./sqs-errors.js";
