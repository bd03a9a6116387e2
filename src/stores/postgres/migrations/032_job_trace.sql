-- The W3C trace context a job was submitted with (traceparent / tracestate headers), handed to its
-- workers with each lease; NULL when the submit sent none.
ALTER TABLE jobs ADD COLUMN traceparent text;
ALTER TABLE jobs ADD COLUMN tracestate text;
