from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

NAME_FIELDS = ['name_ar', 'name_en', 'name_ch', 'name_fr', 'name_ur', 'name_fa', 'name_sp', 'name_de',
               'name_it', 'name_uk', 'name_hi', 'name_id', 'name_ru', 'name_pt', 'name_ms', 'name_tr']


def coordinate(limit):
    # The dataset's own range, as validators, so that their messages are compared too.
    return models.DecimalField(max_digits=9, decimal_places=6, null=True,
                               validators=[MinValueValidator(-limit), MaxValueValidator(limit)])


class City(models.Model):
    locals().update({name: models.CharField(max_length=255) for name in NAME_FIELDS})
    longitude = coordinate(180)
    latitude = coordinate(90)
    top = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        app_label = 'refapp'
