-- Edit mode (issue 30): a row made by the edit hotkey has mode 'edit' (null: a dictation).
-- Its raw_text is the spoken instruction (whisper's words), its text the LLM's answer that was
-- typed over the selection, and its llm_* columns the edit request's timings. The selection
-- it replaced is kept whole (edit_selection, so it can be restored) with its length in
-- characters.
ALTER TABLE dictations ADD COLUMN mode TEXT;
ALTER TABLE dictations ADD COLUMN edit_selection TEXT;
ALTER TABLE dictations ADD COLUMN edit_selection_chars INTEGER;
