-- Learning from corrections (issue 30): the text as the user corrected it in the history
-- window or with `dictum history --correct ID "text"`. Null until a row is corrected; the
-- row's raw_text (whisper's words) and text stay as they were.
ALTER TABLE dictations ADD COLUMN correction TEXT;
