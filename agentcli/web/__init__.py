"""The web tools' own machinery: reaching a URL safely (`addresses`, `fetch`), reading what came
back (`convert`), remembering it for a while (`cache`) and searching (`search`)."""
