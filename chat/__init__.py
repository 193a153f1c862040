"""The Telegram layer: configuration, handlers and texts. Builds on krendzu/, render/, storage/."""
