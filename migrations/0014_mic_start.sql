-- The microphone open only while needed (issue 42): how a dictation's recording started.
-- mic_start is 'preroll' (the stream was open before the press: the pre-roll was kept) or
-- 'cold' (the press found it closed and opened it: recorded from its first buffer);
-- press_to_first_sample_ms is, for a cold open, the time from the press to the stream's
-- first samples (null for a pre-roll start: samples were flowing before the press).
-- Rows from before are null.
ALTER TABLE dictations ADD COLUMN mic_start TEXT;
ALTER TABLE dictations ADD COLUMN press_to_first_sample_ms REAL;
