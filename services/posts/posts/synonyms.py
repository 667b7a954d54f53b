"""Words and phrases feedback writers use for the same thing, grouped into concepts.

Each concept lists stemmed words or two-word phrases (see ``posts.text.stem``); a post
that contains any of them carries the term ``c:<concept>``. Hand-written and small on
purpose: it covers the vocabulary of product feedback, not English.
"""

CONCEPTS: dict[str, tuple[str, ...]] = {
    "darkmode": ("dark mode", "dark theme", "night mode", "night theme", "black theme", "dark ui", "dark background",
                 "darkmode", "light mode", "dark colour", "dark color", "dark skin", "black background",
                 "too bright", "bright", "white background", "white interface", "eye strain"),
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
    "offline": ("offline", "no internet", "without internet", "internet connection", "no connection", "on a plane"),
    "search": ("search", "find", "lookup", "look up", "query"),
    "filter": ("filter", "facet", "narrow", "custom view", "saved view"),
    "slow": ("slow", "speed", "perform", "lag", "laggy", "fast", "faster", "load time", "loading", "sluggish",
             "latency", "take forever", "freez"),
    "crash": ("crash", "bug", "broken", "error", "fail", "not work", "doesn work", "doesnt work", "stop work",
              "glitch", "500", "closes"),
    "delete": ("delet", "remove", "erase", "trash", "purg"),
    "edit": ("edit", "modify", "chang", "updat", "rename"),
    "undo": ("undo", "revert", "restor", "redo", "rollback", "recover", "recycl", "trash", "by mistake", "accident"),
    "bulk": ("bulk", "batch", "mass", "multiple", "several", "at once", "many items", "all at once"),
    "copy": ("duplicat", "copy", "clone"),
    "timeline": ("timeline", "gantt", "dependenc"),
    "kanban": ("kanban", "column", "card", "drag", "trello"),
    "digest": ("digest", "summary", "daily email", "weekly email", "too many emails", "one email"),
    "timetrack": ("time track", "timer", "hour", "timesheet", "how long"),
    "anonymous": ("anonym", "without account", "without an account", "not logged", "guest", "visitor", "without sign"),
    "avatar": ("avatar", "profile picture", "profile photo", "profile image"),
    "markdown": ("markdown", "rich text", "formatting", "bold", "bullet", "code block"),
    "webhook": ("webhook", "callback", "http post"),
    "domain": ("domain", "cname", "dns", "subdomain"),
    "sort": ("sort", "order", "alphabetic"),
    "mention": ("mention", "@", "tag a colleague", "username"),
    "gdpr": ("gdpr", "forgotten", "personal data", "delete my account", "account deletion", "delete account"),
    "invoice": ("invoic", "receipt", "billing history", "accounting"),
    "price": ("pric", "cost", "cheap", "expens", "subscript", "discount", "tier", "paid", "nonprofit", "startup"),
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
    "accessibility": ("accessib", "a11y", "screen reader", "contrast", "blind", "voiceover", "aria"),
    "font": ("font", "typeface", "text size", "font size", "larger text", "too small", "zoom"),
    "audit": ("audit", "history", "activity log", "changelog", "version history"),
    "timezone": ("timezone", "time zone", "utc", "daylight", "local time"),
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
