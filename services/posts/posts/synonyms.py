"""Words and phrases feedback writers use for the same thing, grouped into concepts.

Each concept lists stemmed words or two-word phrases (see ``posts.text.stem``); a post
that contains any of them carries the term ``c:<concept>``. Hand-written and small on
purpose: it covers the vocabulary of product feedback, not English.
"""

CONCEPTS: dict[str, tuple[str, ...]] = {
    "darkmode": ("dark mode", "dark theme", "night mode", "night theme", "black theme", "dark ui", "dark background",
                 "darkmode", "light mode", "dark colour", "dark color", "dark skin"),
    "theme": ("theme", "skin", "appearance", "colour scheme", "color scheme", "look"),
    "export": ("export", "download", "csv", "excel", "spreadsheet", "xlsx", "backup"),
    "import": ("import", "upload csv", "migrate", "migration", "bulk upload"),
    "integration": ("integrat", "connect", "connector", "plugin", "zapier", "slack", "jira", "github", "webhook"),
    "notify": ("notif", "notify", "alert", "remind", "reminder", "push", "ping", "digest"),
    "email": ("email", "e mail", "mail", "inbox", "newsletter"),
    "login": ("login", "log in", "sign in", "signin", "logon", "log on", "logout", "log out", "sign out"),
    "signup": ("signup", "sign up", "regist", "create account", "onboard"),
    "sso": ("sso", "single sign", "saml", "okta", "oauth", "google login", "azure ad"),
    "twofactor": ("2fa", "two factor", "mfa", "multi factor", "authenticator", "totp", "otp", "second factor"),
    "password": ("password", "passwd", "passphrase", "reset password", "forgot password"),
    "mobile": ("mobile", "phone", "ios", "iphone", "android", "app store", "tablet", "ipad", "smartphone"),
    "offline": ("offline", "no internet", "without internet", "no connection", "sync"),
    "search": ("search", "find", "lookup", "look up", "query"),
    "filter": ("filter", "sort", "facet", "narrow"),
    "slow": ("slow", "speed", "perform", "lag", "laggy", "fast", "faster", "load time", "loading", "sluggish",
             "latency", "take forever", "freez"),
    "crash": ("crash", "bug", "broken", "error", "fail", "not work", "doesn work", "doesnt work", "stop work",
              "glitch", "issu", "500"),
    "delete": ("delet", "remove", "erase", "trash", "purg"),
    "edit": ("edit", "modify", "chang", "updat", "rename"),
    "undo": ("undo", "revert", "restor", "redo", "rollback"),
    "price": ("pric", "cost", "cheap", "expens", "plan", "subscript", "billing", "invoic", "discount", "tier", "paid"),
    "language": ("language", "translat", "locali", "i18n", "multilingual", "german", "french", "spanish", "japanese"),
    "calendar": ("calendar", "schedul", "ical", "outlook calendar", "google calendar", "due date", "deadline"),
    "shortcut": ("shortcut", "hotkey", "keyboard", "keybind", "key binding"),
    "image": ("image", "photo", "picture", "screenshot", "gif", "avatar", "attach", "attachment", "file upload"),
    "api": ("api", "endpoint", "rest", "graphql", "sdk", "developer"),
    "permission": ("permission", "role", "access control", "admin right", "read only", "viewer", "privileg"),
    "team": ("team", "collaborat", "share", "sharing", "invite", "member", "colleague", "workspace"),
    "report": ("report", "analytic", "dashboard", "chart", "graph", "statistic", "metric", "insight"),
    "comment": ("comment", "reply", "mention", "discussion", "thread"),
    "tag": ("tag", "label", "categor", "folder"),
    "template": ("template", "preset", "boilerplate"),
    "print": ("print", "pdf", "printer"),
    "accessibility": ("accessib", "a11y", "screen reader", "contrast", "font size", "larger text", "zoom"),
    "font": ("font", "typeface", "text size", "font size"),
    "audit": ("audit", "history", "activity log", "changelog", "version history"),
    "timezone": ("timezone", "time zone", "utc", "daylight"),
    "recurring": ("recur", "repeat", "weekly", "daily", "monthly"),
    "privacy": ("privacy", "gdpr", "personal data", "tracking", "cookie"),
}


def phrases() -> dict[str, set[str]]:
    """Map each stemmed word or phrase to the concepts it belongs to."""
    table: dict[str, set[str]] = {}
    for concept, members in CONCEPTS.items():
        for member in members:
            table.setdefault(member, set()).add(concept)
    return table
