-- Styles picked at the key (issue 41): the `[[style]]` a dictation was written in (picked
-- by a modifier or key with the hotkey, `dictum ctl press --style`, the app's profile or
-- [dictation] style). Null when none was, and for rows from before.
ALTER TABLE dictations ADD COLUMN style TEXT;
