-- Core names a queue's dead-letter queue, and the source queues a RedriveAllowPolicy admits, by
-- queue name within the queue's own account (queues.account): the SQS layer turns its ARNs
-- (arn:aws:sqs:<region>:<account>:<name>) into names and back. Configs written before hold ARNs:
-- each becomes the name after its last colon. Nothing is lost: the SQS layer accepted only ARNs
-- of the region and of the account the queue belongs to, so the ARN's account was the queue's.
UPDATE queues
SET config = json_set(
  json_remove(config, '$.redrivePolicy.deadLetterTargetArn'),
  '$.redrivePolicy.deadLetterQueueName',
  substr(
    json_extract(config, '$.redrivePolicy.deadLetterTargetArn'),
    -- rtrim drops every character but ':' from the right: what is left is the ARN up to its last colon.
    length(rtrim(json_extract(config, '$.redrivePolicy.deadLetterTargetArn'), replace(json_extract(config, '$.redrivePolicy.deadLetterTargetArn'), ':', ''))) + 1
  )
)
WHERE json_type(config, '$.redrivePolicy.deadLetterTargetArn') = 'text';

UPDATE queues
SET config = json_set(
  json_remove(config, '$.redriveAllowPolicy.sourceQueueArns'),
  '$.redriveAllowPolicy.sourceQueueNames',
  json((
    SELECT json_group_array(substr(arn.value, length(rtrim(arn.value, replace(arn.value, ':', ''))) + 1))
    FROM json_each(queues.config, '$.redriveAllowPolicy.sourceQueueArns') AS arn
  ))
)
WHERE json_type(config, '$.redriveAllowPolicy.sourceQueueArns') = 'array';
