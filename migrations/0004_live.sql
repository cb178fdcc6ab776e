-- Live dictation (issue 4): where the time went between the key and the typed text, and how
-- the text got there. Every column is null for file transcriptions.
ALTER TABLE dictations ADD COLUMN press_to_capture_ms REAL;  -- key down -> recording started
ALTER TABLE dictations ADD COLUMN preroll_ms INTEGER;         -- audio kept from before the press
ALTER TABLE dictations ADD COLUMN post_roll_ms INTEGER;       -- audio recorded after the release
ALTER TABLE dictations ADD COLUMN release_to_text_ms REAL;    -- key up -> final text ready
ALTER TABLE dictations ADD COLUMN release_to_typed_ms REAL;   -- key up -> last character injected
ALTER TABLE dictations ADD COLUMN tail_stt_ms REAL;           -- whisper time spent after the release
ALTER TABLE dictations ADD COLUMN chunks INTEGER;             -- streamed chunks transcribed while held
ALTER TABLE dictations ADD COLUMN inject_method TEXT;         -- 'type', 'paste', 'wtype', 'clipboard', 'none'
ALTER TABLE dictations ADD COLUMN inject_error TEXT;          -- why injection failed (text left on the clipboard)
