-- Offline voice commands (issue 16): the commands a dictation executed ("new line", "scratch
-- that"...), as a JSON array of names. Null when it had none, and for rows from before.
ALTER TABLE dictations ADD COLUMN commands TEXT;
