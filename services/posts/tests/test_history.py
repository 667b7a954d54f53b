"""A post's history (issue 37): its status changes and merges, with who and when, written in the
change's own unit of work and read newest first; end users see a signed-in team member's name
but not an API key's, and a merge with a post that is not approved shows to the team only."""

from .helpers import manager, person, user
from .test_author_votes import ANONYMOUS, BODY


def test_status_changes_and_merges_are_kept_with_who_and_when(context, slug):
    a = context.service.create(user(slug), slug, BODY)["id"]
    b = context.service.create(user(slug), slug, {**BODY, "title": "CSV export"})["id"]
    team = person(slug, "Ada Lovelace")
    context.service.update(team, slug, a, {"statusSlug": "planned"})
    context.service.update(manager(slug), slug, a, {"statusSlug": "open"})
    context.service.update(team, slug, a, {"eta": "2027-01"})  # not a status change: not history
    context.merges.merge(team, slug, b, {"intoPostId": a})
    seen = context.service.history(user(slug), slug, a)["items"]
    assert [i["type"] for i in seen] == ["merged_in", "status", "status"]
    merged, by_key, by_person = seen
    assert merged["post"] == {"id": b, "title": "CSV export"} and merged["actor"] == {"name": "Ada Lovelace"}
    assert (by_key["was"]["slug"], by_key["status"]["slug"], by_key["actor"]) == ("planned", "open", None)
    assert (by_person["was"]["slug"], by_person["status"]["slug"]) == ("open", "planned")
    assert by_person["actor"] == {"name": "Ada Lovelace"} and by_person["at"].endswith("Z")
    # The team sees who each actor was; the merged post's own history says where it went.
    team_view = context.service.history(manager(slug), slug, a)["items"]
    assert team_view[1]["actor"]["id"].startswith("key:")
    assert context.service.history(ANONYMOUS, slug, b)["items"][0]["post"] == {"id": a, "title": BODY["title"]}
    context.merges.unmerge(team, slug, b)
    assert [i["type"] for i in context.service.history(user(slug), slug, a)["items"]][:2] == ["unmerged_out", "merged_in"]
    assert context.service.history(user(slug), slug, b)["items"][0]["type"] == "unmerged_from"


def test_a_merge_with_a_post_that_is_not_approved_is_the_teams(context, slug):
    a = context.service.create(user(slug), slug, BODY)["id"]
    spam = context.service.create(user(slug), slug, {**BODY, "title": "Cheap pills"})["id"]
    context.service.update(manager(slug), slug, spam, {"moderationState": "spam"})
    context.merges.merge(manager(slug), slug, spam, {"intoPostId": a})
    assert context.service.history(user(slug), slug, a)["items"] == []
    assert [i["post"]["id"] for i in context.service.history(manager(slug), slug, a)["items"]] == [spam]
