"""Real-browser tests (Chromium, Playwright): charts, panels in Voila, reports, accessibility audits."""
