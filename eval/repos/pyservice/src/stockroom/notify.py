"""Outgoing email. Without an SMTP host (development) messages are only logged."""

from __future__ import annotations

import logging
import smtplib
from email.message import EmailMessage

from stockroom.settings import Settings

log = logging.getLogger(__name__)
SENDER = "stockroom@example.com"


def send_email(settings: Settings, subject: str, body: str) -> bool:
    if not settings.smtp_host or not settings.alert_email:
        log.warning("email not configured; would have sent %r:\n%s", subject, body)
        return False
    message = EmailMessage()
    message["From"] = SENDER
    message["To"] = settings.alert_email
    message["Subject"] = subject
    message.set_content(body)
    try:
        with smtplib.SMTP(settings.smtp_host, settings.smtp_port, timeout=10) as smtp:
            smtp.send_message(message)
    except (OSError, smtplib.SMTPException):
        log.exception("sending %r to %s failed", subject, settings.alert_email)
        return False
    return True
