"""
The reference's POST /cities/, in real Django + DRF (Debian's python3-djangorestframework), as a
differential oracle: a ModelSerializer over the reference's fields (models.py), TokenAuthentication,
SQLite in memory, Django's test client. Reads {"token": KEY, "cases": [{"headers": {name: text,
each character one byte as sent}, "body": base64}]} on stdin; writes one JSON answer per case:
{"status", "headers", "body": base64}. Run it with Debian's /usr/bin/python3.
"""
import base64
import json
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import django
from django.conf import settings

settings.configure(
    DEBUG=False,
    SECRET_KEY='oracle',
    ALLOWED_HOSTS=['*'],
    USE_TZ=True,
    TIME_ZONE='UTC',
    ROOT_URLCONF=__name__,
    INSTALLED_APPS=['django.contrib.contenttypes', 'django.contrib.auth', 'rest_framework', 'rest_framework.authtoken', 'refapp'],
    MIDDLEWARE=['django.middleware.security.SecurityMiddleware', 'django.middleware.common.CommonMiddleware',
                'django.middleware.clickjacking.XFrameOptionsMiddleware'],
    DATABASES={'default': {'ENGINE': 'django.db.backends.sqlite3', 'NAME': ':memory:'}},
    REST_FRAMEWORK={
        'DEFAULT_AUTHENTICATION_CLASSES': ['rest_framework.authentication.TokenAuthentication'],
        'DEFAULT_PERMISSION_CLASSES': ['rest_framework.permissions.IsAuthenticatedOrReadOnly'],
        'COERCE_DECIMAL_TO_STRING': False,
        'UNAUTHENTICATED_USER': None,
    },
    TEMPLATES=[{'BACKEND': 'django.template.backends.django.DjangoTemplates', 'APP_DIRS': True}],
    LOGGING_CONFIG=None,
)
django.setup()

from django.core.management import call_command
from django.test import Client
from django.test.client import FakePayload
from django.urls import path
from rest_framework import generics, serializers

from refapp.models import City


class CitySerializer(serializers.ModelSerializer):
    class Meta:
        model = City
        fields = '__all__'


class CityList(generics.ListCreateAPIView):
    queryset = City.objects.all()
    serializer_class = CitySerializer


urlpatterns = [path('cities/', CityList.as_view())]

SHOWN = ['content-type', 'www-authenticate', 'allow', 'vary', 'retry-after']


def main():
    request = json.load(sys.stdin)
    call_command('migrate', run_syncdb=True, verbosity=0)
    from django.contrib.auth.models import User
    from rest_framework.authtoken.models import Token
    Token.objects.create(key=request['token'], user=User.objects.create(username='writer'))
    client = Client(raise_request_exception=False)
    for case in request['cases']:
        body = base64.b64decode(case['body'])
        environ = {'REQUEST_METHOD': 'POST', 'PATH_INFO': '/cities/', 'CONTENT_LENGTH': str(len(body)), 'wsgi.input': FakePayload(body)}
        for name, value in case['headers'].items():
            key = name.upper().replace('-', '_')
            environ[key if key in ('CONTENT_TYPE', 'CONTENT_LENGTH') else f'HTTP_{key}'] = value
        response = client.request(**environ)
        headers = {name: response[name] for name in SHOWN if response.has_header(name)}
        print(json.dumps({'status': response.status_code, 'headers': headers, 'body': base64.b64encode(response.content).decode()}), flush=True)


main()
