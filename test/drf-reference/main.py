"""
The reference service (Django 3.2 + DRF 3.14, Debian's python3-djangorestframework) answering
batches through Django's test client, for test/oracle.test.ts. One JSON object a line on stdin:
  {"cities": [city, ...], "baseUrl": "http://host[:port][/prefix]", "requests": [{"method", "target", "accept"?}, ...]}
For each request one JSON line on stdout: {"status", "headers": {allow, content-type, vary, location}, "body": base64},
then {"done": true}. Cities are the API's own records (coordinates as decimal text).
"""
import base64
import json
import logging
import os
import sys
from decimal import Decimal
from urllib.parse import urlsplit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import django
from django.conf import settings

settings.configure(
    DEBUG=False,
    SECRET_KEY='oracle',
    ALLOWED_HOSTS=['*'],
    ROOT_URLCONF='cities.api',
    INSTALLED_APPS=['django.contrib.contenttypes', 'django.contrib.auth', 'rest_framework', 'cities'],
    DATABASES={'default': {'ENGINE': 'django.db.backends.sqlite3', 'NAME': ':memory:'}},
    MIDDLEWARE=[
        'django.middleware.security.SecurityMiddleware',
        'django.middleware.common.CommonMiddleware',
        'django.middleware.clickjacking.XFrameOptionsMiddleware',
    ],
    TEMPLATES=[{'BACKEND': 'django.template.backends.django.DjangoTemplates', 'APP_DIRS': True,
                'OPTIONS': {'context_processors': ['django.template.context_processors.request']}}],
    USE_TZ=True,
    TIME_ZONE='UTC',
    STATIC_URL='/static/',
    REST_FRAMEWORK={'COERCE_DECIMAL_TO_STRING': False, 'DEFAULT_AUTHENTICATION_CLASSES': [],
                    'DEFAULT_PERMISSION_CLASSES': []},
    # No log handlers: Django 3.2's default mail_admins handler formats its report even with no
    # ADMINS, reads request.GET again while reporting TooManyFieldsSent (> 1000 query fields) and
    # raises out of the handler, so the 400 Django means to send becomes the WSGI server's 500.
    LOGGING_CONFIG=None,
)
django.setup()
logging.getLogger('django').addHandler(logging.NullHandler())
logging.getLogger('django').propagate = False

from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.utils.dateparse import parse_datetime  # noqa: E402

from cities.models import City  # noqa: E402
from rest_framework import negotiation  # noqa: E402
from rest_framework.utils.mediatypes import _MediaType  # noqa: E402


def order_by_precedence(media_types):
    """
    DRF's, with each precedence group in the Accept header's order instead of a set: a set of
    strings iterates in hash order, which Python randomizes per process, so the real service picks
    among equally specific media types (`application/json; indent=4, application/json; indent=2`)
    differently from one start to the next. Header order is one of the orders it may take.
    """
    groups = [[], [], [], []]
    for media_type in media_types:
        group = groups[3 - _MediaType(media_type).precedence]
        if media_type not in group:
            group.append(media_type)
    return [group for group in groups if group]


negotiation.order_by_precedence = order_by_precedence

HEADERS = ('allow', 'content-type', 'vary', 'location')


def load(cities):
    City.objects.all().delete()
    rows = []
    for c in cities:
        city = City(**{k: v for k, v in c.items() if k not in ('longitude', 'latitude', 'created_at', 'updated_at')})
        city.longitude = None if c['longitude'] is None else Decimal(c['longitude'])
        city.latitude = None if c['latitude'] is None else Decimal(c['latitude'])
        rows.append(city)
    City.objects.bulk_create(rows)
    # auto_now fields are set on create: write the dataset's own timestamps afterwards.
    for c in cities:
        City.objects.filter(id=c['id']).update(created_at=parse_datetime(c['created_at']), updated_at=parse_datetime(c['updated_at']))


def answer(client, base, req):
    path = req['target']
    extra = {'HTTP_HOST': base.netloc, 'SCRIPT_NAME': base.path}
    if base.path:
        assert path.startswith(base.path + '/'), path
        path = path[len(base.path):]
    if req.get('accept') is not None:
        extra['HTTP_ACCEPT'] = req['accept']
    response = client.generic(req['method'], path, secure=base.scheme == 'https', **extra)
    headers = {h: response[h] for h in HEADERS if response.has_header(h)}
    return {'status': response.status_code, 'headers': headers, 'body': base64.b64encode(response.content).decode('ascii')}


def main():
    with connection.schema_editor() as editor:
        editor.create_model(City)
    client = Client(raise_request_exception=False)
    out = sys.stdout
    for line in sys.stdin.buffer:
        batch = json.loads(line)
        load(batch['cities'])
        base = urlsplit(batch['baseUrl'])
        for req in batch['requests']:
            out.write(json.dumps(answer(client, base, req)) + '\n')
        out.write('{"done": true}\n')
        out.flush()


if __name__ == '__main__':
    main()
