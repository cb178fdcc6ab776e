-- Per-app profiles (issue 16): the [[profile]] the focused window picked at the key press
-- ('default' when none matched or the app could not be known). Null for rows from before
-- this version and for files.
ALTER TABLE dictations ADD COLUMN profile TEXT;
