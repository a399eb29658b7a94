-- The emotion a user's message expresses (issue 18): one of the seven
-- labels and the classifier's confidence, tagged when the message is
-- written. NULL for the agent's messages and for messages stored before
-- emotions were tagged.
ALTER TABLE messages ADD COLUMN emotion TEXT
    CHECK (emotion IS NULL OR emotion IN ('joy', 'sadness', 'anger', 'fear', 'surprise', 'disgust', 'neutral'));
ALTER TABLE messages ADD COLUMN emotion_confidence REAL
    CHECK (emotion_confidence IS NULL OR (emotion_confidence >= 0 AND emotion_confidence <= 1));
