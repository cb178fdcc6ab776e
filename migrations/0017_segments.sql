-- A file transcription's timed segments (issue 40): whisper's segments with their times in
-- milliseconds from the start of the file, as JSON ([{"start_ms":0,"end_ms":2480,"text":"…"}]),
-- so `dictum history --export talk.srt` can write its subtitles later. Null for dictations
-- (their words are typed, not timed) and for rows from before.
ALTER TABLE dictations ADD COLUMN segments TEXT;
