-- Voice commands heard but refused (issue 26): a key command with text in a terminal,
-- hands-free into a terminal, ... as a JSON array of {name, why}. Null when none were.
ALTER TABLE dictations ADD COLUMN commands_refused TEXT;
