// Placeholder until the resume window lands (relay/resume_window.h).
