-- Core names a queue's dead-letter queue, and the source queues a RedriveAllowPolicy admits, by
-- queue name within the queue's own account (queues.account): the SQS layer turns its ARNs
-- (arn:aws:sqs:<region>:<account>:<name>) into names and back. Configs written before hold ARNs:
-- each becomes the name after its last colon. Nothing is lost: the SQS layer accepted only ARNs
-- of the region and of the account the queue belongs to, so the ARN's account was the queue's.
UPDATE queues
SET config = jsonb_set(
  config::jsonb #- '{redrivePolicy,deadLetterTargetArn}',
  '{redrivePolicy,deadLetterQueueName}',
  to_jsonb(regexp_replace(config::jsonb #>> '{redrivePolicy,deadLetterTargetArn}', '^.*:', ''))
)::text
WHERE jsonb_typeof(config::jsonb #> '{redrivePolicy,deadLetterTargetArn}') = 'string';

UPDATE queues
SET config = jsonb_set(
  config::jsonb #- '{redriveAllowPolicy,sourceQueueArns}',
  '{redriveAllowPolicy,sourceQueueNames}',
  (
    SELECT coalesce(jsonb_agg(regexp_replace(arn, '^.*:', '') ORDER BY ord), '[]'::jsonb)
    FROM jsonb_array_elements_text(config::jsonb #> '{redriveAllowPolicy,sourceQueueArns}') WITH ORDINALITY AS a (arn, ord)
  )
)::text
WHERE jsonb_typeof(config::jsonb #> '{redriveAllowPolicy,sourceQueueArns}') = 'array';
